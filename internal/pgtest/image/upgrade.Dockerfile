# localhost/ulidflake/postgres-upgrade:OLD-NEW: the image of PostgreSQL NEW
# with the binaries of release OLD beside it, for pg_upgrade. The two come
# from different Debian suites (15 from bookworm, 18 from forky) and no
# apt repository here has both, so OLD's tree is copied from its own image
# with the shared libraries it links that NEW's image has no library of
# the same name for (ICU 72, libxml2.so.2, OpenLDAP 2.5, GnuTLS and theirs)
# into /usr/lib/postgresql/OLD/compat, on LD_LIBRARY_PATH. NEW's binaries
# link none of those names, so they keep their own libraries; libraries of
# a name both have (libc, libssl.so.3, libpq.so.5) are NEW's, which keep
# the older ABI. LLVM (JIT) is left out: the old server runs with jit=off.
# Built by internal/pgtest (upgrade.go) from the images the tests run.
ARG OLD_IMAGE
ARG NEW_IMAGE
FROM ${OLD_IMAGE} AS old
ARG OLD
USER root
RUN mkdir /deps && ls /usr/lib/postgresql/${OLD}/bin/* /usr/lib/postgresql/${OLD}/lib/*.so | grep -v llvmjit \
      | xargs ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | xargs -r cp -L -t /deps

FROM ${NEW_IMAGE} AS resolve
USER root
COPY --from=old /deps /deps
RUN mkdir /compat && for f in /deps/*; do \
      n=$(basename "$f"); \
      case "$n" in libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|ld-linux*) continue ;; esac; \
      ldconfig -p | grep -q "^[[:space:]]*$n " || cp "$f" /compat/; \
    done

FROM ${NEW_IMAGE}
ARG OLD
ARG HASH
COPY --from=old /usr/lib/postgresql/${OLD} /usr/lib/postgresql/${OLD}
COPY --from=old /usr/share/postgresql/${OLD} /usr/share/postgresql/${OLD}
COPY --from=resolve /compat /usr/lib/postgresql/${OLD}/compat
ENV LD_LIBRARY_PATH=/usr/lib/postgresql/${OLD}/compat
LABEL org.ulidflake.upgrade=${HASH}
