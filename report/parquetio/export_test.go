package parquetio

// ArrowTable is arrowTable, for the tests of package parquetio_test.
var ArrowTable = arrowTable
