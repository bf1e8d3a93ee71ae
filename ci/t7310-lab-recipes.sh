#!/bin/sh
# SPDX-License-Identifier: MIT
# t7310: the recipes for labs' engines beside the CI templates
# (ci/templates/: Slurm, Beaker, openQA, LAVA, a Kubernetes job pair) exist,
# each runs `ibvct conformance --peer` with a role and names only options
# that `ibvct conformance --help` documents; the YAML ones parse (Perl's
# CPAN::Meta::YAML), the shell ones are sh, each engine's hooks are where
# the recipe says (Beaker's barrier and result commands, LAVA's lava-sync
# and lava-test-case, openQA's barrier_wait, Slurm's srun of two nodes).
# And the option check can fail: a recipe naming an option ibvct lacks is
# caught.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
t=$src/ci/templates
help=$(sh "$src/tools/ibvct/ibvct" conformance --help 2>&1)

# recipe_opts FILE: the options of its command lines (continued lines
# joined), after "conformance", their quoted words left out
recipe_opts() {
	grep -v '^ *#' "$1" 2>/dev/null | sed -e :a -e '/\\$/N; s/\\\n//; ta' |
		grep " conformance " | sed 's/.* conformance //; s/"[^"]*"//g' |
		grep -oE -- '--[a-z][a-z-]*' | sort -u
}
# unknown_opts FILE: those of its options the help does not document
unknown_opts() {
	for uo in $(recipe_opts "$1"); do
		printf '%s\n' "$help" | grep -q -- "$uo[] =|[]" || printf ' %s' "$uo"
	done
}

for r in slurm-pair.sbatch beaker-runtest.sh openqa-ibvct-pair.pm lava-pair.yaml k8s-pair.yaml; do
	f=$t/$r
	opts=$(recipe_opts "$f")
	bad=$(unknown_opts "$f")
	test_expect_success "$r: ibvct conformance --peer with a role, and only options it has" '
		[ -f "$f" ] || { echo "no $f"; exit 1; }
		grep -q "conformance .*--peer" "$f" && grep -q -- "--role" "$f" || { echo "no --peer/--role in $f"; exit 1; }
		echo "options:" $opts; echo "not in ibvct conformance --help:$bad"
		[ -n "$opts" ] && [ -z "$bad" ]
	'
done

# the check catches an option ibvct lacks, on a continued line too
sed 's/--run-id /--run-name /' "$t/slurm-pair.sbatch" >"$tl_tmp/doctored.sbatch"
bad=$(unknown_opts "$tl_tmp/doctored.sbatch")
test_expect_success 'a recipe naming an option ibvct lacks is caught' '
	echo "found:$bad"
	[ "$bad" = " --run-name" ]
'

for r in lava-pair.yaml k8s-pair.yaml; do
	test_expect_success "$r parses as YAML" '
		perl -MCPAN::Meta::YAML -e "local \$/; open(my \$fh, q(<), \$ARGV[0]) or die; my \$d = CPAN::Meta::YAML->read_string(<\$fh>) or die CPAN::Meta::YAML->errstr; print scalar(@\$d), qq( documents\n)" "$t/$r"
	'
done
test_expect_success 'the shell recipes are sh' '
	sh -n "$t/slurm-pair.sbatch" && sh -n "$t/beaker-runtest.sh"
'
test_expect_success "each engine's hooks" '
	grep -q "^#SBATCH --nodes=2" "$t/slurm-pair.sbatch" && grep -q "srun --nodes=2" "$t/slurm-pair.sbatch" &&
	grep -q "rhts-sync-set" "$t/beaker-runtest.sh" && grep -q "rhts-sync-block" "$t/beaker-runtest.sh" &&
	grep -q -- "--result-cmd rstrnt-report-result" "$t/beaker-runtest.sh" &&
	grep -q "barrier_wait(.ibvct-start.)" "$t/openqa-ibvct-pair.pm" &&
	grep -q -- "--sync-cmd lava-sync" "$t/lava-pair.yaml" && grep -q "lava-test-case" "$t/lava-pair.yaml" &&
	grep -q "completionMode: Indexed" "$t/k8s-pair.yaml"
'
test_done
