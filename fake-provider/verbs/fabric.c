/* SPDX-License-Identifier: MIT */
/*
 * The fabric: fake hosts on one machine that reach each other, as two
 * machines with RoCE NICs on one Ethernet segment do. One run dir is one
 * fake host (its daemon, its QP numbers); hosts whose processes share the
 * directory $IBVCT_FABRIC are on one wire. Each context publishes there the
 * GIDs of its device's ports, one file a GID (fabric/<32 hex digits>:
 * "RUNDIR DEVICE"), and a packet whose address names a GID of another host
 * goes to that host: the requester asks that host's daemon where the QP
 * number lives (a connection of its own to it, with this process's ring,
 * so that the answers find their way back), as an HCA sends to the port a
 * GID resolves to (RoCE v2: the GID is the IP address, IBA vol 1 annex A17
 * A17.4; rdma-core v44.0 providers/rxe/rxe.c rxe_create_ah resolves it,
 * the kernel's rxe_net.c sends to it). An address no host has is lost on
 * the wire: the requester's retries run out (RETRY_EXC_ERR). Without
 * $IBVCT_FABRIC every address is this host's, as before there were two.
 *
 * Owns: the fabric directory's entries of this process's hosts, and the
 * connections to other hosts' daemons ("wires"), one per device of this
 * process and host reached, dropped with the device's ring (fp__fabric_drop)
 * and remade after a fork. Runs under the plugin lock (the engine's upcall).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fp_verbs.h"

#define FP_FABRIC_GIDS	16		/* GID -> wire answers kept per process */

struct fp_wire {
	struct fp_wire *next;
	int devidx;
	pid_t pid;			/* made in this process (a fork's child remakes it) */
	char rundir[108], devname[FP_NAME_MAX];
	struct fk_client *fk;
	ino_t ring;			/* the ring it registered (a new one: remake) */
};

static struct fp_wire *fp_wires;
static struct {
	int devidx;
	union ibv_gid gid;
	struct fp_wire *w;		/* NULL: this host's own */
} fp_gid_cache[FP_FABRIC_GIDS];
static unsigned fp_ngid_cache, fp_gid_next;

static const char *fp_fabric_dir(void)
{
	const char *d = getenv("IBVCT_FABRIC");

	return d && d[0] ? d : NULL;
}

bool fp__fabric_on(void)
{
	return fp_fabric_dir() != NULL;
}

static void fp_gid_hex(const union ibv_gid *g, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", g->raw[i]);
}

static bool fp_gid_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;

	return !memcmp(g, &zero, sizeof(zero));
}

/* "RUNDIR DEVICE" of the fabric's entry for gid; 0, or ENOENT. */
static int fp_fabric_read(const union ibv_gid *gid, char *rundir, size_t rlen, char *dev,
			  size_t dlen)
{
	char path[PATH_MAX], hex[33], buf[256];
	ssize_t n;
	int fd;

	fp_gid_hex(gid, hex);
	snprintf(path, sizeof(path), "%s/%s", fp_fabric_dir(), hex);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return ENOENT;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	{
		char *sp = strchr(buf, ' ');

		if (!sp || (size_t)(sp - buf) >= rlen || strlen(sp + 1) >= dlen || !sp[1])
			return ENOENT;
		*sp = 0;
		memcpy(rundir, buf, (size_t)(sp - buf) + 1);
		memcpy(dev, sp + 1, strlen(sp + 1) + 1);
	}
	return 0;
}

/* A daemon answers in rundir (its host is up). */
static bool fp_host_up(const char *rundir)
{
	struct sockaddr_un sa;
	int fd, up;

	if (fk_proto_addr(&sa, rundir))
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	up = !connect(fd, (const struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return up;
}

/*
 * An address this host keeps out of, said once a process for each address
 * (on stderr, as a kernel says a duplicate address it refused): two hosts
 * set up with one address is a mistake of their setup (two scripts with the
 * same GIDs on one fabric), and the packets meant for this host going to
 * the other one is hard to tell from a fault otherwise.
 */
#define FP_FABRIC_SAID	32
static union ibv_gid fp_said[FP_FABRIC_SAID];
static unsigned fp_nsaid;

static void fp_fabric_refused(const union ibv_gid *g, const char *other, const char *odev,
			      const char *rundir, const char *dev)
{
	char text[INET6_ADDRSTRLEN];
	unsigned i;

	for (i = 0; i < fp_nsaid; i++)
		if (!memcmp(&fp_said[i], g, sizeof(*g)))
			return;
	if (fp_nsaid < FP_FABRIC_SAID)
		fp_said[fp_nsaid++] = *g;
	if (!inet_ntop(AF_INET6, g->raw, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	fprintf(stderr, "ibvct fake provider: fabric %s: address %s is held by the host of run "
		"dir %s (device %s), which is up: this host (run dir %s, device %s) keeps out of "
		"it, and packets to it go to that host\n", fp_fabric_dir(), text, other, odev,
		rundir, dev);
}

/*
 * This host's device on the fabric: an entry per GID of its ports, unless
 * another host that is up has it already (two hosts with one address: the
 * first keeps it, as a duplicate IP address is refused, and the second
 * says so: fp_fabric_refused). Written whole (rename), so that a reader
 * never sees half of one.
 */
void fp__fabric_publish(const struct fp_dev_spec *spec)
{
	char rundir[108], path[PATH_MAX], tmp[PATH_MAX + 32], hex[33], line[256];
	char other[108], odev[FP_NAME_MAX];
	const char *dir = fp_fabric_dir();
	int p, i, fd, n;

	if (!dir || fk_proto_rundir(rundir, sizeof(rundir)))
		return;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return;
	n = snprintf(line, sizeof(line), "%s %s\n", rundir, spec->name);
	for (p = 0; p < spec->nports; p++) {
		for (i = 0; i < spec->port[p].ngids; i++) {
			const union ibv_gid *g = &spec->port[p].gid[i];

			if (fp_gid_zero(g))
				continue;
			if (!fp_fabric_read(g, other, sizeof(other), odev, sizeof(odev)) &&
			    (strcmp(other, rundir) || strcmp(odev, spec->name)) && fp_host_up(other)) {
				fp_fabric_refused(g, other, odev, rundir, spec->name);
				continue;
			}
			fp_gid_hex(g, hex);
			snprintf(path, sizeof(path), "%s/%s", dir, hex);
			snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0)
				continue;
			if (write(fd, line, (size_t)n) != n || close(fd) || rename(tmp, path))
				unlink(tmp);
		}
	}
}

static void fp_wire_free(struct fp_wire *w)
{
	/* an inherited connection is the parent's: fk_disconnect closes our copy */
	fk_disconnect(w->fk);
	free(w);
}

/* Every answer naming w forgotten. */
static void fp_gid_cache_drop(const struct fp_wire *w)
{
	for (unsigned i = 0; i < fp_ngid_cache; i++)
		if (fp_gid_cache[i].w == w)
			fp_gid_cache[i].devidx = -1;
}

void fp__fabric_drop(int devidx)
{
	struct fp_wire **pp = &fp_wires, *w;

	while ((w = *pp)) {
		if (w->devidx != devidx) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		fp_gid_cache_drop(w);
		fp_wire_free(w);
	}
}

static ino_t fp_ring_ino(int memfd)
{
	struct stat st;

	return memfd >= 0 && !fstat(memfd, &st) ? st.st_ino : 0;
}

/* The wire of devidx to (rundir, devname): kept, or made and registered. */
static int fp_wire_get(struct fe_qp *qp, const char *rundir, const char *devname,
		       struct fp_wire **out)
{
	int devidx = fe_dev_index(qp->dev), memfd = fe_xport_memfd(fe_dev_xport(qp->dev));
	ino_t ring = fp_ring_ino(memfd);
	struct fp_wire **pp = &fp_wires, *w;
	struct fk_qp_limits lim;
	struct fk_connect_opts opts = {
		.limits = &lim, .flags = FK_CONNECT_REMOTE, .rundir = rundir,
		.quirks = fk_quirk_bits(fp__script, FK_MSG_HELLO),
		/* the kernel this host's release plays, as its own contexts
		 * say it (provider.c): a daemon whose device plays another
		 * refuses the wire, a host of another release */
		.hello_flags = fp_prof_kernel_flags(),
	};
	int err;

	if (!ring)
		return ENOENT;		/* no ring: nothing could answer us */
	while ((w = *pp)) {
		if (w->devidx == devidx && !strcmp(w->rundir, rundir) &&
		    !strcmp(w->devname, devname)) {
			if (w->pid == getpid() && w->ring == ring && !fk_inherited(w->fk)) {
				*out = w;
				return 0;
			}
			/* a fork's child, or the device's ring made anew */
			*pp = w->next;
			fp_gid_cache_drop(w);
			fp_wire_free(w);
			continue;
		}
		pp = &w->next;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return ENOMEM;
	fp__ctx_limits(qp->spec, &lim);
	err = fk_connect(devname, (int)fp__script->lifetime, &opts, &w->fk);
	if (!err)
		err = fk_ring_set(w->fk, memfd);
	if (err) {
		if (w->fk)
			fk_disconnect(w->fk);
		free(w);
		return err;
	}
	w->devidx = devidx;
	w->pid = getpid();
	w->ring = ring;
	snprintf(w->rundir, sizeof(w->rundir), "%s", rundir);
	snprintf(w->devname, sizeof(w->devname), "%s", devname);
	w->next = fp_wires;
	fp_wires = w;
	*out = w;
	return 0;
}

/* The engine's upcall (fp_engine.h fk_wire). */
int fp__fabric_wire(struct fe_qp *qp, const struct ibv_ah_attr *ah, struct fk_client **out)
{
	const struct fp_dev_spec *spec = qp->spec;
	int devidx = fe_dev_index(qp->dev), p, i, err;
	char rundir[108], mine[108], devname[FP_NAME_MAX];
	struct fp_wire *w = NULL;
	unsigned k;

	*out = NULL;
	/* an address of this host's own ports */
	for (p = 0; p < spec->nports; p++)
		for (i = 0; i < spec->port[p].ngids; i++)
			if (!memcmp(&spec->port[p].gid[i], &ah->grh.dgid, sizeof(ah->grh.dgid)))
				return 0;
	for (k = 0; k < fp_ngid_cache; k++)
		if (fp_gid_cache[k].devidx == devidx &&
		    !memcmp(&fp_gid_cache[k].gid, &ah->grh.dgid, sizeof(ah->grh.dgid))) {
			w = fp_gid_cache[k].w;
			if (!w)
				return 0;
			if (w->pid == getpid() && !fk_inherited(w->fk) &&
			    w->ring == fp_ring_ino(fe_xport_memfd(fe_dev_xport(qp->dev)))) {
				*out = w->fk;
				return 0;
			}
			fp_gid_cache[k].devidx = -1;	/* look again */
			break;
		}
	err = fp_fabric_read(&ah->grh.dgid, rundir, sizeof(rundir), devname, sizeof(devname));
	if (err)
		return ENOENT;
	if (!fk_proto_rundir(mine, sizeof(mine)) && !strcmp(mine, rundir)) {
		w = NULL;		/* another device of this host */
	} else {
		err = fp_wire_get(qp, rundir, devname, &w);
		if (err)
			return ENOENT;	/* that host is down: lost */
	}
	k = fp_ngid_cache < FP_FABRIC_GIDS ? fp_ngid_cache++ : fp_gid_next++ % FP_FABRIC_GIDS;
	fp_gid_cache[k].devidx = devidx;
	fp_gid_cache[k].gid = ah->grh.dgid;
	fp_gid_cache[k].w = w;
	*out = w ? w->fk : NULL;
	return 0;
}
