#!/bin/sh
# Makes a throwaway test CA and a server certificate it signed, for
# 127.0.0.1, ::1 and localhost, in DIR (default: a new temporary directory,
# printed on stdout): ca.pem, server.pem, server.key. For tests only.
set -eu
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=hammer test CA" -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\n' > ext.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile ext.cnf -out server.pem 2>/dev/null
rm -f server.csr ext.cnf ca.srl
echo "$dir"
