package meta

// CreateUser (type 9) creates a non-root account.
type CreateUser struct {
	Username     string  `json:"username"`
	PasswordHash []byte  `json:"password_hash"`
	Grants       []Grant `json:"grants,omitempty"`
}

// UpdateUser (type 10, legacy) replaces hash and grants; the root account's
// grants are immutable.
type UpdateUser struct {
	Username     string  `json:"username"`
	PasswordHash []byte  `json:"password_hash"`
	Grants       []Grant `json:"grants,omitempty"`
}

// DeleteUser (type 11, legacy) deletes an account; root is protected.
type DeleteUser struct {
	Username string `json:"username"`
}

// SeedRootUser (type 12) creates the root admin once per cluster; the only
// way to set root. A cluster that has a root already answers OK unchanged.
type SeedRootUser struct {
	Username     string `json:"username"`
	PasswordHash []byte `json:"password_hash"`
}

// SetUserPassword (type 21) replaces only the password hash.
type SetUserPassword struct {
	Username     string `json:"username"`
	PasswordHash []byte `json:"password_hash"`
}

// SetUserGrants (type 22) replaces only the grants; root's are immutable.
type SetUserGrants struct {
	Username string  `json:"username"`
	Grants   []Grant `json:"grants"`
}

// DeleteUserReleaseTopics (type 32) deletes an account and clears the owner
// of every topic it owned, so a future user of that name inherits nothing.
type DeleteUserReleaseTopics struct {
	Username string `json:"username"`
}

func (*CreateUser) Type() EntryType              { return TypeCreateUser }
func (*UpdateUser) Type() EntryType              { return TypeUpdateUser }
func (*DeleteUser) Type() EntryType              { return TypeDeleteUser }
func (*SeedRootUser) Type() EntryType            { return TypeSeedRootUser }
func (*SetUserPassword) Type() EntryType         { return TypeSetUserPassword }
func (*SetUserGrants) Type() EntryType           { return TypeSetUserGrants }
func (*DeleteUserReleaseTopics) Type() EntryType { return TypeDeleteUserReleaseTopics }

func (e *CreateUser) Subject() string              { return "user " + e.Username }
func (e *UpdateUser) Subject() string              { return "user " + e.Username }
func (e *DeleteUser) Subject() string              { return "user " + e.Username }
func (e *SeedRootUser) Subject() string            { return "user " + e.Username }
func (e *SetUserPassword) Subject() string         { return "user " + e.Username }
func (e *SetUserGrants) Subject() string           { return "user " + e.Username }
func (e *DeleteUserReleaseTopics) Subject() string { return "user " + e.Username }

func validAccount(name string, hash []byte, grants []Grant) error {
	if err := ValidUsername(name); err != nil {
		return err
	}
	if len(hash) == 0 || len(hash) > passwordHashMaxBytes {
		return invalid("password hash of %d bytes outside 1..%d", len(hash), passwordHashMaxBytes)
	}
	return validGrants(grants)
}

// Validate checks the username, hash and grants.
func (e *CreateUser) Validate() error { return validAccount(e.Username, e.PasswordHash, e.Grants) }

// Validate checks the username, hash and grants.
func (e *UpdateUser) Validate() error { return validAccount(e.Username, e.PasswordHash, e.Grants) }

// Validate checks the username.
func (e *DeleteUser) Validate() error { return ValidUsername(e.Username) }

// Validate checks the username and hash.
func (e *SeedRootUser) Validate() error { return validAccount(e.Username, e.PasswordHash, nil) }

// Validate checks the username and hash.
func (e *SetUserPassword) Validate() error { return validAccount(e.Username, e.PasswordHash, nil) }

// Validate checks the username and grants.
func (e *SetUserGrants) Validate() error {
	if err := ValidUsername(e.Username); err != nil {
		return err
	}
	return validGrants(e.Grants)
}

// Validate checks the username.
func (e *DeleteUserReleaseTopics) Validate() error { return ValidUsername(e.Username) }
