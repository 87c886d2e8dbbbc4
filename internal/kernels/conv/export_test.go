package conv

// SetWinograd turns Winograd's convolutions on or off and returns what it
// was, for the tests of the direct ones.
func SetWinograd(on bool) (was bool) {
	was, winogradOn = winogradOn, on
	return was
}
