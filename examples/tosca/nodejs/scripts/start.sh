#!/bin/bash
# Runs the notes service under systemd.
set -euo pipefail
cat > /etc/systemd/system/notes.service <<UNIT
[Unit]
Description=notes
After=network.target
[Service]
EnvironmentFile=/srv/notes/notes.env
Environment=PORT=${PORT}
ExecStart=/usr/bin/node /srv/notes/server.js
Restart=always
[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable --now notes
