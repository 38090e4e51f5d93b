package token

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadOrCreate reads the keyset from the PEM file at path. When there is no
// such file it generates a key, writes it there with mode 0600 (creating the
// parent directories) and reports created.
//
// Servers starting together on a shared volume all end up with the same key:
// the file appears in one step and is never overwritten, so a server that
// loses the race reads the winner's key instead.
func LoadOrCreate(path string) (ks *Keyset, created bool, err error) {
	data, err := os.ReadFile(path)
	if err == nil {
		ks, err := Parse(data)
		if err != nil {
			return nil, false, fmt.Errorf("token: load %s: %w", path, err)
		}
		return ks, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("token: load keys: %w", err)
	}

	ks, err = Generate()
	if err != nil {
		return nil, false, err
	}
	data, err = ks.PEM()
	if err != nil {
		return nil, false, err
	}
	won, err := createOnce(path, data)
	if err != nil {
		return nil, false, fmt.Errorf("token: create keys: %w", err)
	}
	if !won {
		return LoadOrCreate(path)
	}
	return ks, true, nil
}

// createOnce writes data to path with mode 0600 unless path already exists,
// in which case it reports false. Readers never see a partial file: the data
// goes to a temporary file that is then hard-linked into place, which unlike a
// rename fails rather than replaces when path exists.
func createOnce(path string, data []byte) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*") // mode 0600
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	err = os.Link(tmp.Name(), path)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		// Some filesystems have no hard links; a rename is still atomic,
		// only the race between two first starts is lost.
		if err := os.Rename(tmp.Name(), path); err != nil {
			return false, err
		}
	}
	syncDir(dir)
	return true, nil
}

// syncDir makes the new directory entry survive a crash. It is best effort:
// some filesystems cannot sync a directory, and the key is written either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
