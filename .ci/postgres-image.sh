#!/usr/bin/env bash
# Kept for muscle memory: the recipe lives with the test harness, which runs
# it by itself when it needs an image.
exec "$(dirname "$0")/../internal/pgtest/image/build.sh" "$@"
