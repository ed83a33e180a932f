#!/bin/bash
# Installs the shop's PHP files into Apache's document root.
set -euo pipefail
install -d /var/www/html
install -m 0644 "${ARTIFACT_DIR}/index.php" /var/www/html/index.php
