package data

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// attribute is one ARFF @attribute declaration.
type attribute struct {
	name      string
	kind      string   // "numeric", "nominal", or the declared type (string, date, relational)
	values    []string // nominal values
	line, col int      // position of the type
}

// readARFF parses a dense ARFF file: @relation lines (ignored, may
// repeat), @attribute NAME numeric|real|integer|{v1,v2,...}, @data, then
// comma-separated rows; "%" starts a comment line and "?" is a missing
// value. Every attribute used as a feature must be numeric, or a
// categorical column of the schema (Options.Categorical; nominal, string or
// numeric codes, matched as text); the class
// (the attribute named "class" in any case, else the last one, unless
// Options.LabelColumn says otherwise) may be nominal. Error columns are
// byte columns in header lines and field numbers in data rows.
func readARFF(lr *lineReader, b *builder) error {
	var attrs []attribute
	dataLine := 0
	for dataLine == 0 {
		line, err := lr.next()
		if err == io.EOF {
			return posErr(b.file, max(lr.line, 1), 1, "no @data section")
		}
		if err != nil {
			return err
		}
		p := skipSpace(line, 0)
		if p == len(line) || line[p] == '%' {
			continue
		}
		if line[p] != '@' {
			return posErr(b.file, lr.line, p+1, "unexpected text before @data: %q (a data row before the @data line, or no @data line)", truncate(line[p:]))
		}
		end := p
		for end < len(line) && !isSpace(line[end]) && line[end] != '{' {
			end++
		}
		switch kw := strings.ToLower(string(line[p:end])); kw {
		case "@relation":
		case "@attribute":
			a, err := parseAttribute(b.file, lr.line, line, end)
			if err != nil {
				return err
			}
			// The attribute and its strings (at most the line's length).
			if err := b.m.charge(int64(len(line)), "the @attribute declarations"); err != nil {
				return err
			}
			if err := push(b.m, &attrs, a, "the @attribute declarations"); err != nil {
				return err
			}
		case "@data":
			dataLine = lr.line
		default:
			return posErr(b.file, lr.line, p+1, "unsupported ARFF declaration %q", kw)
		}
	}
	if len(attrs) == 0 {
		return posErr(b.file, dataLine, 1, "no @attribute declarations before @data")
	}

	names := make([]string, len(attrs))
	defLabel := len(attrs) - 1
	for j := len(attrs) - 1; j >= 0; j-- {
		names[j] = attrs[j].name
		if strings.EqualFold(attrs[j].name, "class") {
			defLabel = j
		}
	}
	lay, err := b.layout(names, len(attrs), defLabel, dataLine)
	if err != nil {
		return err
	}
	for j, a := range attrs {
		if lay.feat[j] < 0 || a.kind == "numeric" || lay.cat != nil && lay.cat[j] != nil {
			// A categorical column of the schema may be declared nominal,
			// string or numeric (codes): its values are matched as text.
			continue
		}
		typ := a.kind
		hint := ""
		if a.kind == "nominal" {
			typ = "nominal {" + strings.Join(a.values, ",") + "}"
			hint = fmt.Sprintf("declare it categorical in a --feature-bounds schema ({\"name\": %q, \"categories\": [%s]}, see schemas/README.md), or ", a.name, catList(a.values))
		}
		return posErr(b.file, a.line, a.col,
			"attribute %q has type %s; only numeric features are read as such (%sskip it with --ignore-columns %d)",
			a.name, typ, hint, j+1)
	}
	var declared map[string]bool
	if a := attrs[lay.label]; a.kind == "nominal" {
		declared = make(map[string]bool, len(a.values))
		for _, v := range a.values {
			declared[v] = true
		}
	}

	rr := &recordReader{lr: lr, sp: splitter{sep: ',', quotes: `"'`, m: b.m},
		skip: func(t []byte) bool { return t[0] == '%' }}
	for {
		rec, ln, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(rec) > 0 && bytes.HasPrefix(rec[0], []byte("{")) {
			return posErr(b.file, ln, 1, "sparse ARFF rows ({index value, ...}) are not supported")
		}
		if declared != nil && len(rec) == lay.ncols {
			lab := bytes.TrimSpace(rec[lay.label])
			if !isMissing(lab) && !declared[string(lab)] {
				return posErr(b.file, ln, lay.label+1, "label %q is not a declared value of %q {%s}",
					lab, attrs[lay.label].name, strings.Join(attrs[lay.label].values, ","))
			}
		}
		if err := b.row(lay, rec, ln); err != nil {
			return err
		}
	}
}

// parseAttribute parses the rest of an @attribute line from byte p.
func parseAttribute(file string, ln int, line []byte, p int) (attribute, error) {
	p = skipSpace(line, p)
	if p == len(line) {
		return attribute{}, posErr(file, ln, p+1, "@attribute without a name")
	}
	var a attribute
	if q := line[p]; q == '\'' || q == '"' {
		end := bytes.IndexByte(line[p+1:], q)
		if end < 0 {
			return attribute{}, posErr(file, ln, p+1, "unterminated quoted attribute name")
		}
		a.name = string(line[p+1 : p+1+end])
		p += end + 2
	} else {
		s := p
		for p < len(line) && !isSpace(line[p]) && line[p] != '{' {
			p++
		}
		a.name = string(line[s:p])
	}
	p = skipSpace(line, p)
	a.line, a.col = ln, p+1
	rest := bytes.TrimRight(line[p:], " \t\r\v\f")
	if len(rest) == 0 {
		return attribute{}, posErr(file, ln, p+1, "attribute %q has no type", a.name)
	}
	if rest[0] == '{' {
		if rest[len(rest)-1] != '}' {
			return attribute{}, posErr(file, ln, p+1, "attribute %q: unterminated nominal value list", a.name)
		}
		a.kind = "nominal"
		for _, v := range strings.Split(string(rest[1:len(rest)-1]), ",") {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			a.values = append(a.values, v)
		}
		return a, nil
	}
	typ := strings.ToLower(string(rest[:skipToken(rest, 0)]))
	switch typ {
	case "numeric", "real", "integer":
		a.kind = "numeric"
	case "string", "date", "relational":
		a.kind = typ
	default:
		return attribute{}, posErr(file, ln, p+1, "attribute %q has unknown type %q", a.name, typ)
	}
	return a, nil
}

// truncate shortens b for messages.
func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
