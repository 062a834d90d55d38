#!/usr/bin/env bash
# A raw HTTP client of the served Tesseract: /apply on tesseract/example_inputs.json (two
# launches over three bumps), then /vector_jacobian_product of the impact x coordinates with
# respect to the launch velocities, restitution and friction. Responses are plain JSON; a header
# `Accept: application/json+base64` asks for base64 array buffers instead (docs/tesseract.md).
#   bash examples/python/curl_roundtrip.sh [URL]        (default http://127.0.0.1:8000)
set -euo pipefail
url=${1:-http://127.0.0.1:8000}
payload="$(dirname "$0")/../../tesseract/example_inputs.json"
post() {  # endpoint, then curl's data arguments; fails on an HTTP error, printing its body
  curl --silent --show-error --fail-with-body --max-time 120 -X POST "$url/$1" \
       -H 'Content-Type: application/json' "${@:2}"
}

echo "== POST $url/apply"
post apply --data-binary "@$payload"
echo

# The request is the payload's inputs plus what to differentiate; the cotangent picks the x of
# every impact slot (impact_points has shape (2, 3, 2)).
vjp_request=$(python3 -c '
import json, sys
request = json.load(open(sys.argv[1]))
request.update(vjp_inputs=["launch_velocity", "restitution", "friction"], vjp_outputs=["impact_points"],
               cotangent_vector={"impact_points": [[[1, 0]] * 3] * 2})
print(json.dumps(request))' "$payload")
echo "== POST $url/vector_jacobian_product"
post vector_jacobian_product --data-binary "$vjp_request"
echo
