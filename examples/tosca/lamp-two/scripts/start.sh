#!/bin/bash
# Reloads Apache so the shop's configuration is live.
set -euo pipefail
systemctl reload httpd
echo "shop is at ${app_url}"
