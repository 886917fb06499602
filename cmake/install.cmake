# Install rules and the Debian package.
#
#   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-release --target incise incise-record
#   cmake --install build-release --prefix /opt/incise     # bin/, share/man/man1/
#   (cd build-release && cpack -G DEB)                       # or: tools/package
#
# `incise record` runs the incise-record beside it, so both go to the same bin/.
# Man pages are made from each program's --help by help2man when it is installed
# (tools/setup installs it); without it the programs install without them.

include(GNUInstallDirs)

install(TARGETS incise RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET incise-record)
  install(TARGETS incise-record RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")

find_program(INCISE_HELP2MAN help2man)
if(INCISE_HELP2MAN)
  set(incise_man_pages "")
  foreach(program incise incise-record)
    if(NOT TARGET ${program})
      continue()
    endif()
    set(page ${CMAKE_CURRENT_BINARY_DIR}/man/${program}.1)
    set(compressed ${page}.gz)
    if(program STREQUAL "incise")
      set(description "analyze incise traces: profiles, flame graphs, locks, off-CPU, diffs")
    else()
      set(description "record CPU samples, scheduler, lock and fault events into a trace")
    endif()
    add_custom_command(
      OUTPUT ${compressed}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
      COMMAND ${INCISE_HELP2MAN} --no-info --no-discard-stderr
              --version-string=${PROJECT_VERSION} --name=${description}
              --output=${page} $<TARGET_FILE:${program}>
      COMMAND gzip -9nf ${page}
      DEPENDS ${program}
      COMMENT "Writing the man page ${program}.1"
      VERBATIM)
    list(APPEND incise_man_pages ${compressed})
  endforeach()
  add_custom_target(incise_man_pages ALL DEPENDS ${incise_man_pages})
  install(FILES ${incise_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: man pages are not built (apt-get install help2man)")
endif()

set(CPACK_PACKAGE_NAME incise)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "incise maintainers <incise@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "record-then-analyze profiler: CPU, scheduler, lock and fault events in one trace")
set(CPACK_PACKAGE_DESCRIPTION
    "incise-record streams CPU samples with stacks, lock and wait events, scheduler switches and
wake-ups and page faults into one compressed columnar trace file; incise analyzes it anywhere:
flat profiles, flame graphs, locks, off-CPU time, lock holders preempted or faulting inside
their critical sections, diffs and archives.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
# dpkg-shlibdeps derives Depends from the binaries' shared libraries (libc, libelf, libdw).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR DEB)
include(CPack)
