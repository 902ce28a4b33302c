package vfs

// FlipBit inverts one bit of name at byte off, as silent disk corruption would.
func FlipBit(fsys FS, name string, off int64, bit uint) error {
	f, err := fsys.OpenRW(name)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 1 << (bit % 8)
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	return f.Sync()
}

// Tear cuts name to size bytes, as a crash mid-write would.
func Tear(fsys FS, name string, size int64) error {
	f, err := fsys.OpenRW(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// Zero overwrites n bytes of name at off with zeros, keeping its size: the
// "size reached the disk, data did not" sector.
func Zero(fsys FS, name string, off, n int64) error {
	f, err := fsys.OpenRW(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		return err
	}
	return f.Sync()
}
