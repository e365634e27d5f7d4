package data

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkLoadIJCNN1 measures parsing of the 49,990-row ijcnn1 training
// file, decompressed beforehand (bzip2 decoding is measured separately).
func BenchmarkLoadIJCNN1(b *testing.B) {
	z, err := os.ReadFile(sharedFile(b, "ijcnn1.trn.bz2"))
	if err != nil {
		b.Fatal(err)
	}
	plain := decompressAll(b, z)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := Read(bytes.NewReader(plain), "ijcnn1", Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bzip2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Read(bytes.NewReader(z), "ijcnn1.trn.bz2", Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLoadCSV(b *testing.B) {
	raw, err := os.ReadFile(sharedFile(b, "wdbc.data"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(raw), "wdbc.data", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func decompressAll(b *testing.B, z []byte) []byte {
	lr, _, err := open(bytes.NewReader(z), "x", DefaultMaxBytes)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(lr.r); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
