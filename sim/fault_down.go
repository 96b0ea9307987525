package sim

import (
	"errors"

	"github.com/kvsim/kvsim/des"
)

// downFault starts (on) or ends the down fault of scenario event key on workers ids.
func (c *Cluster) downFault(now des.Time, key int, ids []int32, on bool) {
	c.err = errors.New("down faults are not built yet")
}
