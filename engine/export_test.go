package engine

// Generated is the number of output tokens emitted so far.
func (s *Seq) Generated() int { return s.generated }
