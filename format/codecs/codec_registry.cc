// The one list of codecs this build knows. Adding a codec: write its .cc
// with a registerXCodec(), declare it in codec.h, add one line here.
#include <cassert>

#include "format/codecs/codec.h"

namespace incise::format::codecs {

const Registry& Registry::instance() {
  static const Registry registry = [] {
    Registry r;
    registerVarintCodec(r);
    registerDeltaVarintCodec(r);
    registerFixed64Codec(r);
    registerByteBlobCodec(r);
    registerConstantCodec(r);
    registerPeriodDeltaCodec(r);
    registerBaseDeltaCodec(r);
    registerNoCompression(r);
    registerZstdCompression(r);
    return r;
  }();
  return registry;
}

}  // namespace incise::format::codecs
