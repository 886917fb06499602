# incise_build_without_sanitizers(): the calling directory's targets are built without the
# INCISE_SANITIZE flags the top directory adds, for code that runs inside programs which are not
# sanitized (the workloads the recorder records, libincise-preload.so): a sanitizer runtime
# would intercept their pthread calls and change what is recorded, or fail to load at all.
#
#   include(cmake/without_sanitizers.cmake)     # top CMakeLists.txt
#   incise_build_without_sanitizers()            # in tools/workloads/CMakeLists.txt
function(incise_build_without_sanitizers)
  foreach(property COMPILE_OPTIONS LINK_OPTIONS)
    get_directory_property(options ${property})
    list(FILTER options EXCLUDE REGEX "sanitize")
    set_directory_properties(PROPERTIES ${property} "${options}")
  endforeach()
endfunction()
