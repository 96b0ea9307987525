package sim

import (
	"errors"

	"github.com/kvsim/kvsim/des"
)

// pullErrors starts (on) or ends the pull_errors fault of scenario event key.
func (c *Cluster) pullErrors(now des.Time, key int, on bool) {
	c.err = errors.New("pull_errors faults are not built yet")
}

// noticesFault starts (on) or ends the notices fault of scenario event key on workers ids.
func (c *Cluster) noticesFault(now des.Time, key int, ids []int32, on bool) {
	c.err = errors.New("notices faults are not built yet")
}
