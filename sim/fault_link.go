package sim

import (
	"errors"

	"github.com/kvsim/kvsim/des"
)

// linkFault starts (on) or ends a link fault of scenario event key on workers ids.
func (c *Cluster) linkFault(now des.Time, key int, ids []int32, on bool) {
	c.err = errors.New("link faults are not built yet")
}

// slowFault starts (on) or ends a slow fault of scenario event key on workers ids.
func (c *Cluster) slowFault(now des.Time, key int, ids []int32, on bool) {
	c.err = errors.New("slow faults are not built yet")
}
