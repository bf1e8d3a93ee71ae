/* SPDX-License-Identifier: MIT */
/*
 * The name of a context's file, the one fact of the fake kernel's interface
 * the verbs library needs (ref-impl, whose build sees this folder and no
 * other of the fake provider's). A context's file (CTX_FD, proto.h) is one
 * end of a socketpair whose other end, the fake kernel's, has this abstract
 * AF_UNIX name (the first byte of sun_path is NUL, then this text): the
 * device, then the daemon's pid and the connection that made the file, so
 * that the name is unique. It is how the library finds the device of a file
 * it is handed (ibv_import_device: getpeername on the fd, ref-impl/src/
 * device.c), as libibverbs finds a uverbs file's device by its character
 * device's number (rdma-core v44.0 libibverbs/device.c:386).
 */
#ifndef FK_UFILE_H
#define FK_UFILE_H

/* What every such name starts with; the device's name follows, up to a ':'. */
#define FK_UFILE_PREFIX		"ibvct-verbs:"
/* The whole name: the device, the daemon's pid, the connection's id. */
#define FK_UFILE_NAME_FMT	FK_UFILE_PREFIX "%s:%u:%u"

#endif /* FK_UFILE_H */
