package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/protocol"
)

// File names in a coordinator's state directory (next to jobs/).
const (
	// ChargesFile is the coordinator's privacy ledger: one
	// coordinator.Charge (JSON) per line, appended and fsynced before the
	// job it charges is announced.
	ChargesFile = "charges.jsonl"
	// CheckpointFile is the coordinator.Checkpoint of the last phase
	// start, replaced atomically.
	CheckpointFile = "checkpoint.json"
	// BudgetsFile holds per-site budgets (`pairfed ledger budget set`),
	// in a coordinator's and in a site's state directory.
	BudgetsFile = "budgets.json"
)

// Charges is the coordinator's durable, append-only privacy ledger.
type Charges struct {
	j   *journal
	now func() time.Time
}

// OpenCharges opens the coordinator ledger of state directory dir and
// returns it with the charges it holds (see OpenLedger for torn lines).
func OpenCharges(dir string) (*Charges, []coordinator.Charge, []string, error) {
	var out []coordinator.Charge
	j, notes, err := openJournal(dir, ChargesFile, func(line []byte) error {
		c, err := decodeCharge(line)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &Charges{j: j, now: time.Now}, out, notes, nil
}

// ReadCharges returns the charges in dir without opening the ledger for
// appends.
func ReadCharges(dir string) ([]coordinator.Charge, error) {
	var out []coordinator.Charge
	err := readJournal(filepath.Join(dir, ChargesFile), func(line []byte) error {
		c, err := decodeCharge(line)
		out = append(out, c)
		return err
	})
	return out, err
}

// decodeCharge decodes one line of the coordinator's ledger.
func decodeCharge(line []byte) (coordinator.Charge, error) {
	var c coordinator.Charge
	if err := decodeStrict(line, &c); err != nil {
		return c, err
	}
	if c.Key == "" || c.Site == "" || c.Job == "" {
		return c, errors.New("charge without key, site or job")
	}
	if err := protocol.ValidName("site", c.Site); err != nil {
		return c, fmt.Errorf("charge: %w", err)
	}
	if err := protocol.ValidName("job", c.Job); err != nil {
		return c, fmt.Errorf("charge: %w", err)
	}
	want := coordinator.ChargeKey(c.Job, c.Site, c.Phase)
	if c.Returned {
		// The return of a job's reservation: phase 0, nothing charged.
		if c.Phase != 0 || c.Epsilon != 0 || c.Delta != 0 {
			return c, fmt.Errorf("returned reservation %q with phase %d and (ε, δ) = (%v, %v), want 0", c.Key, c.Phase, c.Epsilon, c.Delta)
		}
		want = coordinator.ReturnKey(c.Job, c.Site)
	}
	if c.Key != want {
		return c, fmt.Errorf("charge key %q is not %q", c.Key, want)
	}
	return c, checkEntry(c.Phase, 0, c.Records, c.Epsilon, c.Delta, []float64{c.Sigma, c.Sensitivity})
}

// Append stamps cs with the current time and makes them durable with one
// fsynced write. The caller (coordinator.Service) never hands a key twice.
func (c *Charges) Append(cs []coordinator.Charge) error {
	if len(cs) == 0 {
		return nil
	}
	now := c.now().UTC()
	vs := make([]any, len(cs))
	for i := range cs {
		cs[i].Time = now
		vs[i] = cs[i]
	}
	return c.j.append(vs...)
}

// Close closes the file.
func (c *Charges) Close() error { return c.j.close() }

// SaveCheckpoint replaces dir's checkpoint atomically.
func SaveCheckpoint(dir string, cp *coordinator.Checkpoint) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("store: checkpoint: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, CheckpointFile), append(b, '\n'))
}

// LoadCheckpoint returns dir's checkpoint, or nil if there is none.
func LoadCheckpoint(dir string) (*coordinator.Checkpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var cp coordinator.Checkpoint
	if err := decodeStrict(b, &cp); err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return &cp, nil
}

// LoadBudgets returns the per-site budgets of dir (none: an empty map).
func LoadBudgets(dir string) (map[string]coordinator.Budget, error) {
	path := filepath.Join(dir, BudgetsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]coordinator.Budget{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	out := map[string]coordinator.Budget{}
	if err := decodeStrict(b, &out); err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	for site, bud := range out {
		if err := bud.Validate(); err != nil {
			return nil, fmt.Errorf("store: %s: site %s: %w", path, site, err)
		}
	}
	return out, nil
}

// SaveBudgets replaces dir's budgets atomically.
func SaveBudgets(dir string, budgets map[string]coordinator.Budget) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	b, err := json.MarshalIndent(budgets, "", "  ")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, BudgetsFile), append(b, '\n'))
}
