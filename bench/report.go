package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// SchemaVersion is the version of the JSON report format documented in
// doc.go. It changes only when a field is renamed, removed or changes meaning.
const SchemaVersion = 1

// Report is a whole run as written by --json and read by --compare.
type Report struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          string       `json:"tool"`
	StartedAt     time.Time    `json:"started_at"`
	Config        RunConfig    `json:"config"`
	Steps         []StepResult `json:"steps"`
}

// RunConfig records how a run was made, so two reports can be checked for
// comparability.
type RunConfig struct {
	BaseURL      string  `json:"base_url"`
	Model        string  `json:"model"`
	API          string  `json:"api"`
	Workload     string  `json:"workload"`
	File         string  `json:"file"`
	InputLen     string  `json:"input_len"`
	OutputLen    string  `json:"output_len"`
	Turns        string  `json:"turns"`
	TurnLen      string  `json:"turn_len"`
	SharedPrefix int     `json:"shared_prefix"`
	Load         string  `json:"load"` // "concurrency" or "rate"
	Requests     int     `json:"requests"`
	DurationS    float64 `json:"duration_s"`
	TimeoutS     float64 `json:"timeout_s"`
	Seed         uint64  `json:"seed"`
	IgnoreEOS    string  `json:"ignore_eos"`
	SLO          SLO     `json:"slo"`
}

// WriteReport writes r as indented JSON to path.
func WriteReport(path string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encoding report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: writing report: %w", err)
	}
	return nil
}

// ReadReport reads a report written by WriteReport.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: reading report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("bench: %s: schema version %d, this tool reads %d", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// IsRate reports whether the run was a request-rate sweep.
func (r *Report) IsRate() bool { return r.Config.Load == "rate" }
