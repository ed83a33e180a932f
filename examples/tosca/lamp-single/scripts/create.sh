#!/bin/bash
# Installs the shop's PHP files into Apache's document root; the shop is the site's front page (Debian's
# Apache ships an index.html that would be served before index.php; Amazon Linux's ships none).
set -euo pipefail
install -d /var/www/html
install -m 0644 "${ARTIFACT_DIR}/app/index.php" /var/www/html/index.php
rm -f /var/www/html/index.html
