package meta

import "fmt"

// Code is the outcome class of an applied entry. Refusals are applied alike
// on every replica and counted as applied; they change no view.
type Code uint8

// Result codes. Part of the journal's stored format: append only.
const (
	CodeOK        Code = 0
	CodeExists    Code = 1
	CodeNotFound  Code = 2
	CodeConflict  Code = 3
	CodeRefused   Code = 4
	CodeProtected Code = 5
	CodeInvalid   Code = 6
)

var codeNames = [...]string{"ok", "exists", "not_found", "conflict", "refused", "protected", "invalid"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Result is what applying one entry decided.
type Result struct {
	Code Code
	// Detail says why, deterministically (no addresses, no times).
	Detail string
}

// OK reports whether the entry changed the views as asked.
func (r Result) OK() bool { return r.Code == CodeOK }

// Err returns nil for OK, else the code's sentinel wrapped with the detail.
func (r Result) Err() error {
	var base error
	switch r.Code {
	case CodeOK:
		return nil
	case CodeExists:
		base = ErrExists
	case CodeNotFound:
		base = ErrNotFound
	case CodeConflict:
		base = ErrConflict
	case CodeRefused:
		base = ErrRefused
	case CodeProtected:
		base = ErrProtected
	default:
		base = ErrInvalidEvent
	}
	return fmt.Errorf("%s: %w", r.Detail, base)
}

func (r Result) String() string {
	if r.Detail == "" {
		return r.Code.String()
	}
	return r.Code.String() + ": " + r.Detail
}

func okResult() Result { return Result{Code: CodeOK} }

func refuse(c Code, format string, args ...any) Result {
	return Result{Code: c, Detail: fmt.Sprintf(format, args...)}
}
