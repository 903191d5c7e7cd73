// Package prefault takes the pages the command's heap will use in one
// system call instead of one page fault each: its first chunk as the
// process starts, and each chunk the heap grows by after that.
//
// A young sidecar's heap is memory it has never touched: every new page
// costs a fault when first written. Answering its first request a fresh
// process took about 390 such faults on its heap, and on a virtual machine
// where a fault costs ~11 µs that was ~4 ms of a 26 ms start. On Linux,
// importing the package populates the 4 MiB chunk of heap the runtime is
// allocating from (madvise MADV_POPULATE_WRITE, Linux 5.14 and later;
// ~1.2 ms there), early in package initialisation; the pages stay as they
// were (zero), only present. It costs up to 4 MiB of resident memory that
// the process would otherwise take a page at a time as its heap grows
// (an idle sidecar holds about 2.3 MiB of it).
//
// The heap goes on growing, a chunk at a time, until it reaches the size
// its work settles at (about 20 MiB for a program taking 50 KB answers,
// against 8 MiB at start-up): the command calls Ahead after each response
// it writes, and Ahead populates each growth, on a goroutine of its own,
// once the runtime has mapped it. A young sidecar's round trips with 50 KB
// answers took 40 % less time over its first 120 of them. Populated memory
// the runtime has not used yet is resident while the runtime counts it as
// returned to the system: up to one growth (a chunk) beyond what it
// reports. What start-up mapped is left as it is.
//
// Only the command imports it: a program that embeds the sidecar's
// packages decides about its own memory. Elsewhere, where the kernel
// refuses, and with Env set to "0", it does nothing (bench/README.md, "A
// young process's heap in one system call").
package prefault

// Env set to "0" in the command's environment turns the populating off:
// for a host that counts every resident page, and for measurements of
// what the process's own work makes resident.
const Env = "MUSTARD_SIDECAR_PREFAULT"
