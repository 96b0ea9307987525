package workload

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
)

// DetectFormat names the trace format of a file from the head of its
// contents, else from its name: FormatOtel for a first line that starts
// with {"resourceSpans" (OTLP JSON, whatever the name: .json is ambiguous),
// FormatMooncake for .jsonl and .json or a first non-blank byte '{',
// FormatAzure for .csv or a first line naming TIMESTAMP, ContextTokens or
// GeneratedTokens; "" when none fits. With a nil head only the name counts.
func DetectFormat(name string, head []byte) Format {
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if IsOtel(trimmed) {
		return FormatOtel
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".json":
		return FormatMooncake
	case ".csv":
		return FormatAzure
	}
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return FormatMooncake
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	for _, col := range azureColumns {
		if bytes.Contains(line, []byte(col)) {
			return FormatAzure
		}
	}
	return ""
}

// IsOtel reports whether a file's head (after any byte-order mark and
// leading white space) opens an OTLP JSON object: {"resourceSpans".
func IsOtel(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	rest, ok := bytes.CutPrefix(head, []byte("{"))
	return ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"resourceSpans"`))
}

// Stream reports whether a file of mode m can be read only once: a pipe, a
// socket or a device, such as a trace given as /dev/stdin.
func Stream(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice) != 0
}
