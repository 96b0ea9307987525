// Package parquetio writes kvsim's tables as Parquet files, streamed in row
// groups, and reads them back. The tables' rows and columns are package
// report's; this is the only package that links Arrow and Parquet, and
// only the CLI (and tools that read outputs) import it, so the model does
// not. docs/outputs.md names the tables and their columns.
package parquetio
