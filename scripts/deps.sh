#!/bin/sh
# Install the Debian 12 packages that bach's build and tests need, when any
# is missing. Runs apt-get update first; needs root or sudo. Quiet and quick
# when everything is already there.
set -eu

# build: compiler, clang-format (the layout, checked by
# tests/cli/format.sh), zlib (required), libdeflate (block compression),
# cmocka (unit tests), libzstd (.byu.zst: zstd frames and the seekable
# format's seek table); tests and bench: clang (libFuzzer smoke runs),
# pigz and gzip (reference figures in make bench), zstd (the reference
# reader of .byu.zst in the tests, and its figures in make bench), valgrind
# (make bench only: its lackey tool traces a real program for
# bench/compress.sh), strace (tests that look for the threads a command
# starts, or the programs it runs), libisal (ISA-L's igzip,
# measured beside the block compressors in make bench; not used to write:
# it compresses traces less than gzip -1).
# bachd: liburing (io_uring writes), libinih (configuration), libsystemd
# (sd_notify). jansson: reading a capture's manifest.jsonl (bach verify,
# recovery).
# the analyses: python3 runs the reference models in tests/models/; cairo
# renders bach plot's SVG, PDF and PNG and pango (libpango1.0-dev, its
# pangocairo) lays their text out (both linked into bach-draw only); chromium renders
# bach report's page headless in its test (a real browser, no console
# errors, images present).
# the capture board: libusb (drivers/usb), umockdev (an emulated board for
# its tests), iverilog and verilator (make fpga-sim, make fpga-lint), yosys,
# nextpnr and icestorm (make fpga-synth); z3, the solver yosys-smtbmc (in
# Debian's yosys) runs for make fpga-formal (Debian 12's boolector does not
# speak the SMT-LIB dialect of its yosys-smtbmc).
# the logic-analyzer path: libsigrok (drivers/sigrok, bach decode), libzip
# (checks a .sr session's members, which libsigrok reads unchecked) and
# sigrok-cli (tests and reference figures in make bench).
# monitoring: prometheus (promtool checks bachd's metrics file and the
# alerting rules in the tests; tests/cli/prometheus.sh runs its server) and
# prometheus-node-exporter (its textfile collector reads the metrics files
# there).
# tabix: htslib's bgzip, the independent reader of our .gzi indexes in the
# tests. python3-cffi, python3-numpy, python3-pytest: the Python module
# (python/bach) over libbach.so and its tests; python3-pandas: its
# to_pandas(), tested when present (it is optional for users);
# python3-matplotlib: bach.plot (python/bach/plot.py), the figures, tested
# when present (optional for users too).
# python3-zstandard: the independent zstd decoder of .byu.zst in its tests.
# python3-dask, python3-distributed: bach.dist (python/bach/dist.py), split
# runs on a Dask cluster, and its tests (a LocalCluster) and bench.
# the manual pages: scdoc turns docs/man/*.scd into roff (make man, make
# install); groff and man-db render them in the tests.
# Slurm (bach plan --slurm): tests/cli/slurm.sh runs munged, slurmctld and
# slurmd of its own, under a private slurm.conf, key, sockets and ports in
# a temporary directory; it neither uses nor disturbs the services the
# packages install (munge's starts with its own key and socket in
# /run/munge where the system starts services; slurmctld's and slurmd's
# do not start without an /etc/slurm/slurm.conf, which they do not ship).
PKGS="gcc make pkg-config clang-format zlib1g-dev libdeflate-dev libzstd-dev libcmocka-dev clang pigz gzip zstd
valgrind strace
libisal-dev
liburing-dev libinih-dev libsystemd-dev
libusb-1.0-0-dev umockdev libumockdev-dev iverilog verilator yosys nextpnr-ice40
fpga-icestorm z3
libsigrok-dev libzip-dev sigrok-cli
libjansson-dev
prometheus prometheus-node-exporter
python3 libcairo2-dev libpango1.0-dev chromium
tabix python3-cffi python3-numpy python3-pytest python3-pandas python3-matplotlib python3-zstandard
python3-dask python3-distributed
scdoc groff-base man-db
slurmctld slurmd slurm-client munge"

# deps.sh --check: only say whether the libraries the programs link are
# there (pkg-config), naming the Debian package of each that is not; plain
# `make` runs this and installs nothing. NO_USB=1 and NO_SIGROK=1 leave
# out what those builds do not link.
if [ "${1:-}" = --check ]; then
	if ! command -v pkg-config > /dev/null 2>&1; then
		echo "deps: pkg-config is missing (Debian: pkg-config); make deps installs everything" >&2
		exit 2
	fi
	mods="zlib:zlib1g-dev libdeflate:libdeflate-dev libzstd:libzstd-dev jansson:libjansson-dev
liburing:liburing-dev inih:libinih-dev libsystemd:libsystemd-dev
cairo:libcairo2-dev pangocairo:libpango1.0-dev"
	[ -n "${NO_USB:-}" ] || mods="$mods libusb-1.0:libusb-1.0-0-dev"
	[ -n "${NO_SIGROK:-}" ] || mods="$mods libsigrok:libsigrok-dev libzip:libzip-dev"
	miss="" pk=""
	for m in $mods; do
		if ! pkg-config --exists "${m%%:*}"; then
			miss="$miss ${m%%:*}"
			pk="$pk ${m#*:}"
		fi
	done
	[ -z "$miss" ] && exit 0
	echo "deps: missing libraries:$miss (Debian:$pk)." >&2
	echo "deps: 'make deps' installs them (or NO_USB=1 / NO_SIGROK=1 builds without the usb or sigrok side)" >&2
	exit 2
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "deps: missing packages:$missing; run as root or install sudo" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done" >&2
