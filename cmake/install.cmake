# Where `cmake --install` and the Debian package (cmake/package.cmake) put themis. The default prefix
# is /usr, the package's: the systemd units name the daemons by absolute path, and GNUInstallDirs maps
# a /usr prefix to /etc and /var (docs/admin.md, "Installing").
include(GNUInstallDirs)

# The daemons (run by systemd) in sbin, the tools users run in bin. themis-launch and themis-train are
# absent from a build without them (themis-train needs LibTorch: -DTHEMIS_BUILD_WORKER=OFF drops it).
foreach(daemon themis-coordinator themis-nodelet)
  install(TARGETS ${daemon} RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
endforeach()
foreach(tool themisctl themis-launch themis-train themis-sim)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# The units in systemd/ name /usr/sbin; under another prefix the installed copies name that one.
set(THEMIS_SYSTEMD_UNIT_DIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" CACHE PATH "where the systemd units are installed")
set(THEMIS_SYSUSERS_DIR "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d" CACHE PATH "where the sysusers.d file is installed")
foreach(unit themis-coordinator.service themis-nodelet.service)
  file(READ ${CMAKE_CURRENT_SOURCE_DIR}/systemd/${unit} text)
  string(REPLACE "/usr/sbin/" "${CMAKE_INSTALL_FULL_SBINDIR}/" text "${text}")
  string(REPLACE "/usr/share/doc/themis/" "${CMAKE_INSTALL_FULL_DOCDIR}/" text "${text}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/systemd/${unit} CONTENT "${text}")
  install(FILES ${CMAKE_BINARY_DIR}/systemd/${unit} DESTINATION ${THEMIS_SYSTEMD_UNIT_DIR})
endforeach()
install(FILES systemd/themis.sysusers.conf DESTINATION ${THEMIS_SYSUSERS_DIR} RENAME themis.conf)

# /etc/themis/themis.toml: a starting point the admin edits (a conffile in the package). Owners and
# modes of /etc/themis and /var/lib/themis are set when the package is configured (packaging/deb/postinst).
install(FILES packaging/themis.toml DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/themis)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_LOCALSTATEDIR}/lib/themis)

install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
