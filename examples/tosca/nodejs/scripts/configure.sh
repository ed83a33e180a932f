#!/bin/bash
# Writes the notes service's database settings.
set -euo pipefail
cat > /srv/notes/notes.env <<ENV
db_host=${db_host}
db_port=${db_port}
db_name=${db_name}
db_user=${db_user}
ENV
