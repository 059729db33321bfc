#!/usr/bin/env bash
# Installs the Debian packages of the local SLURM test cluster (tests/slurm/cluster.py): munge,
# MariaDB (server and client cores), slurmdbd, slurmctld, slurmd and the SLURM client commands.
# Root only; exits non-zero with the reason when it cannot install. The packages' own services are
# not started: the test starts its own daemons, on its own files.
set -euo pipefail

PACKAGES=(munge mariadb-server-core mariadb-client-core slurmdbd slurmctld slurmd slurm-client)

installed=$(dpkg-query --show --showformat='${db:Status-Status}\n' "${PACKAGES[@]}" 2>/dev/null | grep -cx installed || true)
if [ "$installed" -eq "${#PACKAGES[@]}" ]; then
  echo "SLURM test packages already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "cannot install ${PACKAGES[*]}: not root" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "cannot install ${PACKAGES[*]}: no apt-get (not Debian)" >&2
  exit 1
fi

# Debian's convention for "install, do not start": invoke-rc.d asks policy-rc.d, and 101 means no.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
echo "SLURM test packages installed"
