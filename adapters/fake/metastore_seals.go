package fake

import "github.com/narad/narad/domain/meta"

// RemoteKeySeals reads how many passwords a key version has sealed.
func (s *MetaStore) RemoteKeySeals(keyVersion string) (int64, error) {
	return read(s, func(r meta.KVReader) (int64, error) { return meta.RemoteKeySeals(r, keyVersion) })
}
