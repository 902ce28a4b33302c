package consume

// TakeLookAtEverything reports whether the pump was asked to look at every
// topic since the last call, and clears the request (for tests that do not
// run the pump, which would take it).
func TakeLookAtEverything(s *Service) bool { return s.pump.everything.Swap(false) }
