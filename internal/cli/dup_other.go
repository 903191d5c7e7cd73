//go:build unix && !linux

package cli

import "syscall"

func dupTo(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }
