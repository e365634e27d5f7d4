package main

import (
	"fmt"
	"strings"

	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/model"
	"github.com/urfave/cli/v2"
)

func exportCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "export",
		Usage: "export a model artefact to ONNX, which ONNX Runtime (Python, Java, C#, C++, JavaScript) scores without pairfed",
		Description: `Writes the model as an ONNX graph (IR version 8, opset 13, float64) that takes the RAW numeric
   features — the training file's feature columns, label and ignored columns removed, in the model's
   feature order (one-hot indicator columns as in the file) — and applies the stored preprocessing
   map exactly as pairfed score does: imputation constants (a NaN input), the per-feature affine map
   and box of the schema or released ranges, the divide step or the ℓ2 clip to R; then the score
   x'·w (input "features" [N, d], output "score" [N]). Metric models: inputs "features" and
   "features_y", output "sq_distance" [N], the squared Mahalanobis distance of each row pair (the
   nearest-neighbour search over a reference file stays the caller's). The prepared records are an
   output too ("prepared" / "prepared_x").

   The graph's metadata_props carry the feature names, the one-hot layout, the imputation rule and
   the certificate summary (private, ε, δ, mechanism, accountant, neighbouring relation). Reading
   the file, one-hot encoding a category and imputation by mean or drop are the caller's: a
   missing value the model has no constant for gives a NaN score where pairfed score refuses.

Examples:
   pairfed export --model m.json --out m.onnx
   python3 -c 'import onnxruntime as ort, numpy as np; s = ort.InferenceSession("m.onnx"); print(s.run(["score"], {"features": np.array([[6, 148, 72, 35, 0, 33.6, 0.627, 50.0]])}))'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model file (pairfed train/simulate --out-model, pairfed job model)"},
			trustKeyFlag(),
			&cli.StringFlag{Name: "format", Value: "onnx", Usage: "interchange format: onnx"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file (e.g. model.onnx)"},
		},
		Action: runExport,
	})
}

func runExport(c *cli.Context) error {
	switch f := strings.ToLower(c.String("format")); f {
	case "onnx":
	case "pmml":
		return usageError{fmt.Errorf("export: --format pmml is not implemented: use --format onnx (ONNX Runtime loads it in Python, Java, C#, C++ and JavaScript; see docs/manual.md, \"Export and model card\")")}
	default:
		return usageError{fmt.Errorf("export: --format %q is not a known format (want onnx)", c.String("format"))}
	}
	m, err := readTrustedModel(c)
	if err != nil {
		return err
	}
	if err := m.Scorable(); err != nil {
		return err
	}
	sc, err := experiment.ModelScaler(&m.Preprocessing, m.D)
	if err != nil {
		return err
	}
	b, err := model.ExportONNX(m, sc)
	if err != nil {
		return err
	}
	out := c.String("out")
	if err := checkOutput("--out", out, namedPath{"--model", c.String("model")}); err != nil {
		return err
	}
	if err := writeFileAtomic(out, b); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	in := fmt.Sprintf("%q [N, %d]", model.ONNXInput, m.D)
	if m.Task == "metric" {
		in += fmt.Sprintf(" and %q [N, %d]", model.ONNXInputY, m.D)
	}
	cols := "features 1–" + fmt.Sprint(m.D)
	if m.Features != nil {
		cols = strings.Join(m.Features, ", ")
	}
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s (ONNX IR %d, opset %d, %d bytes): input %s float64 = raw %s; %s (private: %v)\n",
		out, model.ONNXIRVersion, model.ONNXOpset, len(b), in, cols, m.ScoreMeaning, m.Certificate.Private)
	return nil
}
