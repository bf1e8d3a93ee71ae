/* SPDX-License-Identifier: MIT */
/*
 * The release the reference plays (ibvct-release.def): one of the
 * rdma-core releases Debian ships, 44 (Debian 12) or 56 (Debian 13), for
 * the whole process. Decided once, at the first question: the environment's
 * IBVCT_RDMA_CORE (ibvct-run and the suites put a script's `rdma-core` line
 * there), else the release of the libibverbs-dev the library was built
 * against (RI_RDMA_CORE_DEFAULT, from the Makefile's pkg-config). The
 * layout is the same whichever it is (verbs.h): what a row changes is
 * behaviour, and each row's code asks ibvct_release_is_56().
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ri.h"

#ifndef RI_RDMA_CORE_DEFAULT
#define RI_RDMA_CORE_DEFAULT 56
#endif

static pthread_once_t ri_rel_once = PTHREAD_ONCE_INIT;
static int ri_rel;

/* "44" or "56", as the script's line spells it; 0 for anything else. */
static int ri_rel_parse(const char *v)
{
	if (!strcmp(v, "44"))
		return 44;
	if (!strcmp(v, "56"))
		return 56;
	return 0;
}

static void ri_rel_decide(void)
{
	const char *v = getenv("IBVCT_RDMA_CORE");

	ri_rel = RI_RDMA_CORE_DEFAULT;
	if (!v || !v[0])
		return;
	if (ri_rel_parse(v)) {
		ri_rel = ri_rel_parse(v);
		return;
	}
	/* a typo must not pass for the default unseen */
	fprintf(stderr, "libibverbs (ibvct): IBVCT_RDMA_CORE=%s: not a release the "
		"reference plays (44 or 56); playing %d\n", v, ri_rel);
}

RI_EXPORT int verbs_ibvct_release(void)
{
	pthread_once(&ri_rel_once, ri_rel_decide);
	return ri_rel;
}

/*
 * PRIVATE_ABI_34: rdma-core 44's IBVERBS_PRIVATE_34 lacks two symbols 56
 * added to it (ibvct-release.def). A provider that needs one loads on 44
 * by the node's name and fails at once to resolve it; playing 44, the core
 * refuses such a provider before dlopen with the loader's words, since
 * this library (56's node) would resolve it. The provider file's undefined
 * dynamic symbols and the versions they need are read from its ELF
 * (.dynsym, .gnu.version, .gnu.version_r); 0 when it may be loaded, else
 * -1 and the reason in why. A file that is not such an ELF is left to
 * dlopen.
 */
static const char *const ri_p34_since_56[] = { "ibv_cmd_create_cq_ex2", "ibv_wr_opcode_str" };

/* The name of version index vi in the verneed entries at vn (in map). */
static const char *ri_need_name(const unsigned char *map, size_t len, const Elf64_Shdr *vn,
				const char *strs, size_t strs_len, uint16_t vi)
{
	size_t off = vn->sh_offset;

	while (off + sizeof(Elf64_Verneed) <= len && off < vn->sh_offset + vn->sh_size) {
		const Elf64_Verneed *n = (const void *)(map + off);
		size_t ao = off + n->vn_aux;
		unsigned i;

		for (i = 0; i < n->vn_cnt && ao + sizeof(Elf64_Vernaux) <= len; i++) {
			const Elf64_Vernaux *a = (const void *)(map + ao);

			if ((a->vna_other & 0x7fff) == vi)
				return a->vna_name < strs_len ? strs + a->vna_name : NULL;
			if (!a->vna_next)
				break;
			ao += a->vna_next;
		}
		if (!n->vn_next)
			break;
		off += n->vn_next;
	}
	return NULL;
}

static int ri_p34_check(const unsigned char *map, size_t len, char *why, size_t wlen)
{
	const Elf64_Ehdr *eh = (const void *)map;
	const Elf64_Shdr *sh, *dynsym = NULL, *versym = NULL, *verneed = NULL, *dstr;
	const char *strs;
	size_t i, k, n;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > len || eh->e_shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr))
		return 0;
	sh = (const void *)(map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)
			continue;
		if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_versym)
			versym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_verneed)
			verneed = &sh[i];
	}
	if (!dynsym || !versym || !verneed || dynsym->sh_link >= eh->e_shnum)
		return 0;
	dstr = &sh[dynsym->sh_link];
	if (dstr->sh_offset > len || dstr->sh_size > len - dstr->sh_offset)
		return 0;
	strs = (const char *)map + dstr->sh_offset;
	n = dynsym->sh_size / sizeof(Elf64_Sym);
	if (versym->sh_size / sizeof(Elf64_Half) < n)
		return 0;
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = (const void *)(map + dynsym->sh_offset + i * sizeof(*s));
		uint16_t vi = ((const Elf64_Half *)(map + versym->sh_offset))[i] & 0x7fff;
		const char *name, *need;

		if (s->st_shndx != SHN_UNDEF || s->st_name >= dstr->sh_size || vi < 2)
			continue;
		name = strs + s->st_name;
		for (k = 0; k < sizeof(ri_p34_since_56) / sizeof(ri_p34_since_56[0]); k++) {
			if (strcmp(name, ri_p34_since_56[k]))
				continue;
			need = ri_need_name(map, len, verneed, strs, dstr->sh_size, vi);
			if (need && !strcmp(need, "IBVERBS_PRIVATE_34")) {
				snprintf(why, wlen, "undefined symbol: %s, version IBVERBS_PRIVATE_34 "
					 "(rdma-core 44's node lacks it: the core plays rdma-core 44)",
					 name);
				return -1;
			}
		}
	}
	return 0;
}

int ri__release_provider_ok(const char *path, char *why, size_t wlen)
{
	struct stat st;
	void *map;
	int fd, ret;

	if (ibvct_release_is_56(IBVCT_REL_PRIVATE_ABI_34))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;		/* dlopen says why */
	if (fstat(fd, &st) || !st.st_size) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	ret = ri_p34_check(map, (size_t)st.st_size, why, wlen);
	munmap(map, (size_t)st.st_size);
	return ret;
}
