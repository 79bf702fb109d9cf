// server/dashboard/assets.h: the dashboard's static files (HTML, JS, CSS),
// embedded into the binary at build time from server/dashboard/assets/.
//
// Thread safety: immutable data.
#ifndef ARGUS_SERVER_DASHBOARD_ASSETS_H_
#define ARGUS_SERVER_DASHBOARD_ASSETS_H_

#include <string_view>

namespace argus::dashboard {

struct Asset {
  std::string_view name;  // file name under assets/, e.g. "app.js"
  std::string_view content_type;
  std::string_view data;
};

// The asset with that name, or nullptr.
const Asset* FindAsset(std::string_view name);

}  // namespace argus::dashboard

#endif  // ARGUS_SERVER_DASHBOARD_ASSETS_H_
