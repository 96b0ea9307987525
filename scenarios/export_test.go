package scenarios

// IDsOf is a selection of the listed workers.
func IDsOf(ids ...int) *Selection { return &Selection{IDs: ids} }
