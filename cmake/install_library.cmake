# Installs the libraries an application links: tarde::tarde (the embedded
# engine, tarde/embedded.h) and tarde::client (the TCP client,
# tarde/clients/cpp/client.h), with their headers and a CMake package:
#
#   find_package(tarde CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE tarde::tarde)
#
# Headers land in <prefix>/include/tarde/ with their source paths (base/,
# clients/cpp/), and the public headers of embedded/include/ in
# <prefix>/include/tarde/; both include directories come with the targets.
# The static libraries below tarde::tarde and tarde::client are installed
# too (the application's link needs them), as are the packages they link:
# RocksDB, spdlog and Threads, found again by tardeConfig.cmake.
# The server's binaries, man pages and units are cmake/install_server.cmake's.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TARDE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tarde)

set_target_properties(asio_standalone PROPERTIES EXPORT_NAME asio_standalone)
install(TARGETS tarde_embedded tarde_client tarde_core tarde_engine tarde_storage tarde_wire
                tarde_base asio_standalone
        EXPORT tardeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR}/tarde)

install(FILES embedded/include/tarde/embedded.h embedded/include/tarde/types.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tarde)
install(FILES base/status.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tarde/base)
install(FILES clients/cpp/client.h clients/cpp/replies.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tarde/clients/cpp)

install(EXPORT tardeTargets NAMESPACE tarde:: DESTINATION ${TARDE_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tardeConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/tardeConfig.cmake
                              INSTALL_DESTINATION ${TARDE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tardeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tardeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tardeConfigVersion.cmake
        DESTINATION ${TARDE_INSTALL_CMAKEDIR})
