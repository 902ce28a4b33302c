package authn

// SlotWaiters is how many checks wait for a verification slot, clean and
// dirty: a check's caller counts in VerifyQueued before its check joins
// a queue, so tests of the slots' order wait on this.
func (a *Authenticator) SlotWaiters() (clean, dirty int) {
	a.slots.mu.Lock()
	defer a.slots.mu.Unlock()
	return len(a.slots.clean), len(a.slots.dirty)
}
