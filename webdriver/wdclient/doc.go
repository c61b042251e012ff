// Package wdclient gives Go users of github.com/tebeka/selenium the wdext
// extension commands that tebeka has no method for (it has no raw-command
// call): ForceSample, and the memory commands.
package wdclient
