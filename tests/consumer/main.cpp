// Links the installed libwstune, lists devices and runs one verified kernel.
#include <iostream>

#include <wstune/device.hpp>
#include <wstune/runner.hpp>
#include <wstune/version.hpp>

int main() {
  auto devices = wstune::enumerate_devices();
  if (devices.empty()) {
    std::cerr << "consumer: no OpenCL device\n";
    return 1;
  }
  const auto& k = wstune::kernel_spec("trapezoid");
  wstune::DeviceRunner runner(devices.front(), k);
  auto r = wstune::run_and_verify(runner, k.parse_size("4096"), std::nullopt, {0, 1});
  std::cout << "wstune " << wstune::version() << " on " << devices.front().info.name << ": "
            << wstune::to_string(r.status) << "\n";
  return r.ok() ? 0 : 1;
}
