package workload

import (
	"bytes"
	"path/filepath"
	"strings"
)

// DetectFormat names the trace format of a file from its name, else from
// the head of its contents: "mooncake" for .jsonl and .json or a first
// non-blank byte '{', "azure" for .csv or a first line naming TIMESTAMP,
// ContextTokens or GeneratedTokens; "" when neither fits.
func DetectFormat(name string, head []byte) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".json":
		return "mooncake"
	case ".csv":
		return "azure"
	}
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return "mooncake"
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	for _, col := range azureColumns {
		if bytes.Contains(line, []byte(col)) {
			return "azure"
		}
	}
	return ""
}
