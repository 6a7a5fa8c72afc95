#!/usr/bin/env bash
# Makes a fresh machine ready to run and test the project: Java 17+, pnpm 12, the workspace's
# dependencies (Node 24 is one of them), DynamoDB Local and Chromium (the console's browser tests). Each step is skipped when its result
# is already there, so running it again is cheap. Quiet on success; on failure it prints the
# failing step's output and what to do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly PNPM_MAJOR=12
readonly JAVA_MIN_MAJOR=17
# The official DynamoDB Local jar ships inside this npm package (no Maven or AWS download needed).
readonly DYNAMODB_LOCAL_PACKAGE=amplify-dynamodb-simulator@2.9.30
readonly DYNAMODB_LOCAL_DIR=.local/dynamodb-local

work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

fail() {
  echo "bootstrap: $*" >&2
  exit 1
}

# Runs one step with its output captured, and shows that output only if the step fails.
quietly() {
  local step=$1
  shift
  if ! "$@" >"$work_dir/step.log" 2>&1; then
    cat "$work_dir/step.log" >&2
    fail "$step failed: $*"
  fi
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    fail "need root to run: $* (run it yourself, then run this script again)"
  fi
}

java_major() {
  local version
  version=$(java -version 2>&1 | sed -nE '1s/.*version "([^"]+)".*/\1/p')
  # Java 8 and older report "1.8.0_x".
  if [[ $version == 1.* ]]; then version=${version#1.}; fi
  echo "${version%%[.+-]*}"
}

ensure_java() {
  if ! command -v java >/dev/null 2>&1; then
    quietly "updating the apt package lists" as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    quietly "installing Java" as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless
  fi
  local major
  major=$(java_major)
  if [[ ! $major =~ ^[0-9]+$ ]] || ((major < JAVA_MIN_MAJOR)); then
    fail "DynamoDB Local needs Java $JAVA_MIN_MAJOR or newer; 'java' on PATH is version '${major:-unknown}'"
  fi
  # The loopback launcher for DynamoDB Local is compiled with the JDK's compiler module
  # (Debian's openjdk-17-jre-headless includes it).
  if ! java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@'; then
    fail "Java has no jdk.compiler module; install a full JDK, e.g. apt-get install -y openjdk-17-jdk-headless"
  fi
}

ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    command -v npm >/dev/null 2>&1 || fail "neither pnpm nor npm is installed; install Node.js (with npm) first"
    quietly "installing pnpm $PNPM_MAJOR" npm install --global --no-fund --no-audit "pnpm@$PNPM_MAJOR"
  fi
  local version
  version=$(pnpm --version)
  if [[ ${version%%.*} != "$PNPM_MAJOR" ]]; then
    fail "pnpm $version found; this workspace needs pnpm $PNPM_MAJOR (npm install --global pnpm@$PNPM_MAJOR)"
  fi
}

install_dependencies() {
  if [ -f pnpm-lock.yaml ]; then
    quietly "installing dependencies" pnpm install --frozen-lockfile --config.confirm-modules-purge=false
  else
    quietly "installing dependencies (no lockfile yet)" pnpm install --config.confirm-modules-purge=false
  fi
}

ensure_dynamodb_local() {
  if [ -f "$DYNAMODB_LOCAL_DIR/DynamoDBLocal.jar" ]; then return; fi
  command -v npm >/dev/null 2>&1 || fail "npm is needed to fetch $DYNAMODB_LOCAL_PACKAGE"
  quietly "downloading DynamoDB Local" npm pack --silent --pack-destination "$work_dir" "$DYNAMODB_LOCAL_PACKAGE"
  quietly "extracting DynamoDB Local" tar -xzf "$work_dir"/amplify-dynamodb-simulator-*.tgz -C "$work_dir" package/emulator
  [ -f "$work_dir/package/emulator/DynamoDBLocal.jar" ] || fail "$DYNAMODB_LOCAL_PACKAGE has no emulator/DynamoDBLocal.jar"
  mkdir -p "$(dirname "$DYNAMODB_LOCAL_DIR")"
  rm -rf "$DYNAMODB_LOCAL_DIR"
  # Moved in whole, so an interrupted run never leaves a half-extracted directory behind.
  mv -T "$work_dir/package/emulator" "$DYNAMODB_LOCAL_DIR"
}

# The console's tests drive Debian's Chromium through playwright-core: Playwright's own browser
# builds are downloads this project does not rely on.
ensure_chromium() {
  if command -v chromium >/dev/null 2>&1; then return; fi
  quietly "updating the apt package lists" as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  quietly "installing Chromium" as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
}

ensure_java
ensure_chromium
ensure_pnpm
install_dependencies
ensure_dynamodb_local
