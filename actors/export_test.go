package actors

// Fault makes the session's actor panic with err, as a bug would, to
// exercise supervision.
func (s *Session) Fault(err error) error {
	_, sendErr := s.rt.post(s.id, &faultCmd{err: err})
	return sendErr
}
