#!/bin/bash
# Installs the notes service.
set -euo pipefail
install -d /srv/notes
install -m 0644 "${ARTIFACT_DIR}/app/server.js" /srv/notes/server.js
