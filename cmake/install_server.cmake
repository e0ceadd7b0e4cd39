# The server's install rules and its Debian package (scripts/package runs
# cpack on them): component "server" holds /usr/bin/tarde, tarde-cli and
# tarde-dump, their man pages, /etc/tarde/tarde.conf (a conffile), the systemd
# unit and the maintainer scripts that create the tarde user. The package
# holds that component only; the embedded library's install rules
# (cmake/install_library.cmake) go into other components.
set(TARDE_PACKAGING_DIR ${CMAKE_SOURCE_DIR}/packaging)
set(TARDE_DEB_REVISION 1)
set(TARDE_DEB_MAINTAINER "tarde maintainers <maintainers@tarde.example>")

install(TARGETS tarde tarde-cli tarde-dump RUNTIME DESTINATION bin COMPONENT server)
install(FILES ${TARDE_PACKAGING_DIR}/tarde.conf DESTINATION /etc/tarde COMPONENT server)
install(FILES ${TARDE_PACKAGING_DIR}/tarde.service DESTINATION /lib/systemd/system
        COMPONENT server)
install(FILES ${TARDE_PACKAGING_DIR}/copyright ${CMAKE_SOURCE_DIR}/README.md
        DESTINATION share/doc/tarde COMPONENT server)

# Generated files: the man pages (help2man, from each program's --help) and
# the Debian changelog, compressed the reproducible way (gzip -9n).
set(TARDE_GENERATED_DIR ${CMAKE_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${TARDE_GENERATED_DIR})
find_program(HELP2MAN help2man)
find_program(GZIP gzip REQUIRED)
set(TARDE_GENERATED_FILES)
add_custom_command(
  OUTPUT ${TARDE_GENERATED_DIR}/changelog.Debian.gz
  COMMAND ${GZIP} -9nc ${TARDE_PACKAGING_DIR}/changelog > ${TARDE_GENERATED_DIR}/changelog.Debian.gz
  DEPENDS ${TARDE_PACKAGING_DIR}/changelog VERBATIM)
list(APPEND TARDE_GENERATED_FILES ${TARDE_GENERATED_DIR}/changelog.Debian.gz)
add_custom_command(
  OUTPUT ${TARDE_GENERATED_DIR}/tarde.conf.5.gz
  COMMAND ${GZIP} -9nc ${TARDE_PACKAGING_DIR}/tarde.conf.5 > ${TARDE_GENERATED_DIR}/tarde.conf.5.gz
  DEPENDS ${TARDE_PACKAGING_DIR}/tarde.conf.5 VERBATIM)
list(APPEND TARDE_GENERATED_FILES ${TARDE_GENERATED_DIR}/tarde.conf.5.gz)
install(FILES ${TARDE_GENERATED_DIR}/changelog.Debian.gz DESTINATION share/doc/tarde
        COMPONENT server)
install(FILES ${TARDE_GENERATED_DIR}/tarde.conf.5.gz DESTINATION share/man/man5
        COMPONENT server)
if(HELP2MAN)
  set(man_tarde "tarde - durable deferred retries server")
  set(man_tarde-cli "talk to a tarde server")
  set(man_tarde-dump "read a tarde data directory")
  foreach(program tarde tarde-cli tarde-dump)
    set(page ${TARDE_GENERATED_DIR}/${program}.1)
    add_custom_command(
      OUTPUT ${page}.gz
      COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1
              --version-string=${PROJECT_VERSION} --name=${man_${program}}
              --output=${page} $<TARGET_FILE:${program}>
      COMMAND ${GZIP} -9nf ${page}
      DEPENDS ${program} VERBATIM)
    list(APPEND TARDE_GENERATED_FILES ${page}.gz)
    install(FILES ${page}.gz DESTINATION share/man/man1 COMPONENT server)
  endforeach()
else()
  message(STATUS "help2man not found: no man pages (scripts/deps installs it)")
endif()
add_custom_target(tarde_packaging_files ALL DEPENDS ${TARDE_GENERATED_FILES})

# CPack's DEB generator, run by scripts/package: build/tarde_<version>_amd64.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tarde)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${TARDE_DEB_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};tarde;server;/")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "durable deferred retries server")
# CPack puts the summary on the Description line and each line of this text
# after it with one space in front (an empty line becomes " ."). No quotes
# or semicolons: CMake would take them for list syntax.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "When an external system answers a call with try again later, tarde keeps
the transaction and puts each retry back on a queue for a dispatcher when
it is due, exactly once per attempt, with the idempotency key
<tx_id>#<attempt>. Its state and time-ordered retry index live in RocksDB,
and a reply means the change is on disk.

This package runs tarde serve as a systemd service (user tarde, data in
/var/lib/tarde, settings in /etc/tarde/tarde.conf), with tarde-cli, the
command-line client, and tarde-dump, which reads a data directory.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${TARDE_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${TARDE_DEB_MAINTAINER})
# dpkg-shlibdeps computes Depends from the binaries; adduser is for postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${TARDE_PACKAGING_DIR}/conffiles ${TARDE_PACKAGING_DIR}/postinst
    ${TARDE_PACKAGING_DIR}/prerm ${TARDE_PACKAGING_DIR}/postrm)
include(CPack)
