package coordinator

import (
	"strings"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// TestReceiveWrongKindOnJobsSubject: a message of a kind the jobs subject
// does not take is dropped as such, before its body is checked (probe 4
// of issue 28: a Result with phase 0 was dropped as "phase 0 outside
// [1, 65536]").
func TestReceiveWrongKindOnJobsSubject(t *testing.T) {
	for _, k := range []protocol.Kind{protocol.KindResult, protocol.KindJoin, protocol.KindSiteUpdate, protocol.Kind(200)} {
		data := []byte{byte(k), 0x80} // an empty MessagePack map: its checks would fail
		_, err := receive("f", protocol.JobsSubject("f"), data)
		if err == nil || !strings.Contains(err.Error(), "a "+k.String()+" message on the jobs subject") || !strings.Contains(err.Error(), "takes only job-submit") {
			t.Errorf("%v: err = %v, want the wrong kind named", k, err)
		}
	}
	// A job query still passes the kind check (and then its own).
	b, err := protocol.Encode(&protocol.JobQuery{Job: "j", Client: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := receive("f", protocol.JobsSubject("f"), b); err != nil {
		t.Errorf("a valid job query refused: %v", err)
	} else if _, ok := m.(*protocol.JobQuery); !ok {
		t.Errorf("got %T", m)
	}
}
