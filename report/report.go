// Package report is what a run reports, apart from any file format: the
// rows and columns of its tables, the digest, latency distributions,
// fidelity against measured runs, the manifest and the output directory,
// written under a temporary name and renamed into place when complete. It
// imports only the standard library and gonum's statistics (a sweep's
// replicates), so the model, which streams rows into it, links no
// file-format code; report/parquetio writes and reads the
// tables as Parquet files. docs/outputs.md names the tables and their
// columns.
package report
