package remotekeys

// Sizes and bounds of the keyring (internals.md §7.6).
const (
	// saltMinBytes is the shortest cluster salt accepted; the cluster
	// mints 32 bytes.
	saltMinBytes = 16
	// secretMinBytes is the fewest bytes a cluster secret must decode to.
	secretMinBytes = 32

	// aesKeyBytes is the AES-256 key length.
	aesKeyBytes = 32
	// keyIDBytes is the key id length; its hex is the 16-character key
	// version.
	keyIDBytes = 8
	// fingerprintKeyBytes is the HMAC-SHA-512 fingerprint key length.
	fingerprintKeyBytes = 64
	// fingerprintBytes is how much of the HMAC a fingerprint keeps
	// (12 hex characters).
	fingerprintBytes = 6

	// envelopeFormatV1 is the first byte of every envelope this version
	// writes; any other first byte does not open.
	envelopeFormatV1 = byte(1)
	// envelopeHeaderBytes is the format byte plus the raw key id.
	envelopeHeaderBytes = 1 + keyIDBytes
	// nonceBytes is the AES-GCM nonce length (96 bits), random per seal.
	nonceBytes = 12
	// tagBytes is the AES-GCM authentication tag length.
	tagBytes = 16
	// envelopeMinBytes is the shortest well-formed envelope: an empty
	// plaintext.
	envelopeMinBytes = envelopeHeaderBytes + nonceBytes + tagBytes
	// envelopeMaxBytes matches the metastore's cap on a sealed password
	// (sealedMaxBytes in domain/meta).
	envelopeMaxBytes = 1024

	// passwordMinBytes and passwordMaxBytes bound the passwords Seal takes
	// (internals.md §7.1).
	passwordMinBytes = 24
	passwordMaxBytes = 72

	// lengthPrefixBytes is the big-endian u32 before each associated-data
	// and fingerprint field.
	lengthPrefixBytes = 4

	// cacheMaxSalts bounds the derived key sets kept per secret; the salt
	// rarely changes, so a full cache is simply emptied.
	cacheMaxSalts = 4
)

// Purpose labels (HKDF info strings) and fixed associated-data parts. They
// are part of the format: changing one changes every key version.
const (
	labelAESKey         = "narad remote aes-256-gcm key v1"
	labelKeyID          = "narad remote key id v1"
	labelFingerprintKey = "narad remote fingerprint key v1"

	// aadPrefix starts the associated data of every seal.
	aadPrefix = "narad remote credential v1"
	// systemRootsMarker is the trust anchor of a remote without a CA
	// bundle. Its length differs from a SHA-512 digest, so it never equals
	// the anchor of any bundle.
	systemRootsMarker = "narad remote trust anchor: system roots"

	// envCurrent and envPrevious name the secrets in messages (never their
	// values).
	envCurrent  = "NARAD_CLUSTER_SECRET"
	envPrevious = "NARAD_CLUSTER_SECRET_PREVIOUS"
)
