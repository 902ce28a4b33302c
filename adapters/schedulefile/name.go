package schedulefile

import (
	"math"
	"strconv"
	"strings"
)

// Name is the file name of the bucket whose deliver-at window starts at
// startMs: "schedule-<startMs>.bucket" (decimal, no padding). startMs is
// never negative for a record this package accepts (DeliverAtMs > 0).
func Name(startMs int64) string {
	return fileNamePrefix + strconv.FormatInt(startMs, 10) + fileNameSuffix
}

// ParseName is Name's inverse; ok is false for any other name: a sign, a
// leading zero other than "0" itself, anything but decimal digits, or a
// value past math.MaxInt64.
func ParseName(name string) (startMs int64, ok bool) {
	digits, ok := strings.CutPrefix(name, fileNamePrefix)
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, fileNameSuffix)
	if !ok || digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		d := int64(digits[i]) - '0'
		if d < 0 || d > 9 || v > (math.MaxInt64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
